// Raised in the transaction that changes the owner's keys (see owner_keys).
MERGE (o:Owner {user: $user})
SET o.keys_version = coalesce(o.keys_version, 0) + 1

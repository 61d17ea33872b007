// Raised in the transaction that changes the owner's keys (see owner_keys); its
// Owner node is locked until the commit, so versions follow the commits' order.
MERGE (o:Owner {user: $user})
SET o.keys_version = coalesce(o.keys_version, 0) + 1
SET o.keys_removed = CASE WHEN $removing THEN o.keys_version ELSE o.keys_removed END
RETURN o.keys_version AS version

MATCH (k:Key {user: $user})
WHERE k.id IN $ids
DELETE k

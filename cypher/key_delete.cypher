UNWIND $ids AS id
MATCH (k:Key {user: $user, id: id})
DELETE k

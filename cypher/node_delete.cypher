// A node goes with its edges, its embedding keys and, if it was the self node, that mark.
UNWIND $ids AS id
MATCH (n:Entity {user: $user, id: id})
OPTIONAL MATCH (k:Key {user: $user, ref: id, kind: 'node'})
OPTIONAL MATCH (o:Owner {user: $user, self_id: id})
DETACH DELETE n, k
REMOVE o.self_id

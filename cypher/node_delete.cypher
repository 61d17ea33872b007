// A node goes with its edges, its embedding keys and, if it was the self node, that mark.
UNWIND $ids AS id
MATCH (n:Entity {user: $user, id: id})
CALL (n, id) {
  MATCH (k:Key {user: $user, ref: id})
  WHERE k.kind = 'node'
  DELETE k
}
CALL (id) {
  MATCH (o:Owner {user: $user, self_id: id})
  REMOVE o.self_id
}
DETACH DELETE n

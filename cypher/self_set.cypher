MERGE (o:Owner {user: $user})
SET o.self_id = $node_id

MATCH (o:Owner {user: $user})
RETURN o.self_id AS self_id

MATCH (n:Entity {user: $user})
RETURN n {.*, created_at: toString(n.created_at), updated_at: toString(n.updated_at)} AS props

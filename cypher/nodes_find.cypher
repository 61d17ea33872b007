// Nodes whose name or an alias equals any of $names (case-folded), one pass.
MATCH (n:Entity {user: $user})
WHERE any(name IN n.names_folded WHERE name IN $names)
RETURN n {.*, created_at: toString(n.created_at), updated_at: toString(n.updated_at)} AS props
ORDER BY n.id

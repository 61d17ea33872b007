// Nodes whose name or an alias equals $name, compared in case-folded form.
MATCH (n:Entity {user: $user})
WHERE $name IN n.names_folded AND ($kind IS NULL OR n.kind = $kind)
RETURN n {.*, created_at: toString(n.created_at), updated_at: toString(n.updated_at)} AS props
ORDER BY n.id

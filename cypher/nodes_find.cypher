// Nodes whose name or an alias equals any of $names (case-folded), found through
// the keyword full-text index ($query: the names as quoted Lucene terms).
CALL db.index.fulltext.queryNodes('entity_names', $query) YIELD node AS n
WITH n
WHERE n.user = $user AND any(name IN n.names_folded WHERE name IN $names)
RETURN n {.*, created_at: toString(n.created_at), updated_at: toString(n.updated_at)} AS props
ORDER BY n.id

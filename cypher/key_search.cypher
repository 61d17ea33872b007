// The index spans every owner, so ask for $candidates and keep this owner's.
// Neo4j reports cosine as (1 + cos) / 2; turn it back into cos.
CALL db.index.vector.queryNodes('key_embedding', $candidates, $vector)
YIELD node, score
WHERE node.user = $user
RETURN node.id AS id, node.text AS text, node.ref AS ref, node.kind AS kind,
       node.embedding AS vector,
       2 * score - 1 AS score
ORDER BY score DESC
LIMIT $limit

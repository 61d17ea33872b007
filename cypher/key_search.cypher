// For each query ($queries: [{i, vector}]), the owner's nearest keys.
// The index spans every owner, so ask it for $candidates and keep this owner's.
// Neo4j reports cosine as (1 + cos) / 2; turn it back into cos.
UNWIND $queries AS query
CALL (query) {
  CALL db.index.vector.queryNodes('key_embedding', $candidates, query.vector)
  YIELD node, score
  WITH node, score
  WHERE node.user = $user
  RETURN node, score
  ORDER BY score DESC
  LIMIT $limit
}
RETURN query.i AS i, node.id AS id, node.text AS text, node.ref AS ref, node.kind AS kind,
       node.embedding AS vector, 2 * score - 1 AS score

// For each query ($queries: [{i, vector}]), the owner's nearest keys of $kinds
// (every kind when null) in the vector index $index (names or claims).
// The index spans every owner, so ask it for $candidates and keep this owner's.
// Neo4j reports cosine as (1 + cos) / 2; turn it back into cos. Each key found
// comes back once with its vector, however many queries found it.
UNWIND $queries AS query
CALL (query) {
  CALL db.index.vector.queryNodes($index, $candidates, query.vector)
  YIELD node, score
  WITH node, score
  WHERE node.user = $user AND ($kinds IS NULL OR node.kind IN $kinds)
  RETURN node, score
  ORDER BY score DESC
  LIMIT $limit
}
WITH collect({i: query.i, id: node.id, score: 2 * score - 1}) AS hits, collect(DISTINCT node) AS found
RETURN hits, [k IN found | {id: k.id, text: k.text, ref: k.ref, kind: k.kind, vector: coalesce(k.embedding, k.claim_embedding)}] AS keys

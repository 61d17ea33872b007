// The owner's claim keys whose text holds any of the words of $query (a Lucene
// query built from quoted words only), best first by the index's BM25 score.
// The index spans every owner: ask it for $candidates and keep this owner's.
CALL db.index.fulltext.queryNodes('claim_words', $query, {limit: $candidates})
YIELD node, score
WHERE node.user = $user
RETURN node.id AS id, node.text AS text, node.ref AS ref, node.kind AS kind, score
ORDER BY score DESC
LIMIT $limit

// What a new claim (source, relation, target) meets among stored edges: the same
// claim, and the live one_to_one claims of that source and relation (which it may
// supersede). Reached from the source node, so the cost follows its degree.
UNWIND $claims AS claim
MATCH (a:Entity {user: $user, id: claim.source})-[r]->(b:Entity)
WHERE type(r) = claim.relation
  AND (b.id = claim.target OR (r.cardinality = 'one_to_one' AND r.superseded_by IS NULL))
RETURN DISTINCT r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target

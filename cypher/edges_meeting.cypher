// What new claims meet among stored edges: the same claim (source, relation,
// target), and the live one_to_one claims of that source and relation (which it may
// supersede). One row per source ($sources: [{source, relations, claims}], a claim
// written "RELATION|target"), so a hub's relationships are read once per write.
UNWIND $sources AS row
MATCH (a:Entity {user: $user, id: row.source})-[r]->(b:Entity)
WHERE type(r) IN row.relations
  AND (type(r) + '|' + b.id IN row.claims
       OR (r.cardinality = 'one_to_one' AND r.superseded_by IS NULL))
RETURN DISTINCT r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)} AS props, type(r) AS relation, a.id AS source, b.id AS target

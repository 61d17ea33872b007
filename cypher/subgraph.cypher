// The neighbourhood of the seeds up to two hops away, either direction, in one pull.
// $hops is 1 or 2; nodes in $stop_at are reached but not expanded; with $live_only, superseded, dormant and expired edges are not crossed; without $with_nodes only the edges come back.
MATCH (s:Entity {user: $user})
WHERE s.id IN $seeds
WITH collect(s) AS seeds
CALL (seeds) {
  UNWIND seeds AS s
  MATCH (s)-[r]-(m:Entity)
  WHERE NOT $live_only OR (r.superseded_by IS NULL AND NOT r.dormant AND NOT r.expired)
  RETURN collect(DISTINCT r) AS near, collect(DISTINCT m) AS ring
}
CALL (seeds, ring) {
  UNWIND ring AS m
  WITH m
  WHERE $hops >= 2 AND NOT m IN seeds AND NOT m.id IN $stop_at
  MATCH (m)-[r]-(:Entity)
  WHERE NOT $live_only OR (r.superseded_by IS NULL AND NOT r.dormant AND NOT r.expired)
  RETURN collect(DISTINCT r) AS far
}
CALL (near, far) {
  UNWIND near + far AS r
  RETURN collect(DISTINCT r) AS crossed
}
CALL (seeds, crossed) {
  UNWIND CASE WHEN $with_nodes
         THEN seeds + [r IN crossed | startNode(r)] + [r IN crossed | endNode(r)]
         ELSE [] END AS n
  RETURN collect(DISTINCT n) AS reached
}
RETURN [n IN reached | n {.*, created_at: toString(n.created_at), updated_at: toString(n.updated_at)}] AS nodes,
       [r IN crossed | {props: r {.*, touched_at: toString(r.touched_at), created_at: toString(r.created_at), expires_at: toString(r.expires_at)}, relation: type(r),
                        source: startNode(r).id, target: endNode(r).id}] AS edges

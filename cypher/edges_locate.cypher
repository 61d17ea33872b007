// Where edges are by id, for ids that do not name their ends (relationship
// properties are indexed per type only): walk the owner's relationships, from the
// owner's nodes by index, never the whole database's.
MATCH (:Entity {user: $user})-[r]->(:Entity)
WHERE r.id IN $ids
RETURN r.id AS id, elementId(r) AS ref

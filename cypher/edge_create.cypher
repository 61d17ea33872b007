// Second half of an edge upsert: the relation is the relationship type.
// (MERGE on a dynamic type crawls on hub nodes; clear-then-create stays linear.)
UNWIND $rows AS row
MATCH (a:Entity {user: $user, id: row.source})
USING INDEX a:Entity(user, id)
MATCH (b:Entity {user: $user, id: row.target})
USING INDEX b:Entity(user, id)
CREATE (a)-[r:$(row.relation)]->(b)
SET r = row.props
SET r.touched_at = datetime(row.times.touched_at),
    r.created_at = datetime(row.times.created_at),
    r.expires_at = datetime(row.times.expires_at)

// Insert or fully replace nodes; the kind is also a label (:Entity:PERSON).
UNWIND $rows AS row
MERGE (n:Entity {user: $user, id: row.id})
SET n = row.props
SET n.created_at = datetime(row.times.created_at),
    n.updated_at = datetime(row.times.updated_at)
REMOVE n:PERSON:ORG:PLACE:EVENT:THING:TOPIC:PREFERENCE:OTHER
SET n:$(row.kind)

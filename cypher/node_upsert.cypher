// Insert or fully replace nodes; the kind is also a label (:Entity:PERSON).
UNWIND $rows AS row
MERGE (n:Entity {user: $user, id: row.id})
SET n = row.props
REMOVE n:PERSON:ORG:PLACE:EVENT:THING:TOPIC:PREFERENCE:OTHER
SET n:$(row.kind)

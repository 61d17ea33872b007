// Edges a close reinforced, taken off the conversation's used edges; notes made
// since the close read the record stay for the next close.
UNWIND $rows AS row
MATCH (c:Conversation {user: $user, id: row.id})
SET c._lock = true
WITH c, row
SET c.used_edges = [id IN coalesce(c.used_edges, []) WHERE NOT id IN row.ids]
REMOVE c._lock

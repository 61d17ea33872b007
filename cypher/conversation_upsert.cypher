// Replace each record's fields, except used_edges, which only grow here (a close
// removes the ones it reinforced): recall's notes survive any record rewrite.
// Locking the node before reading used_edges keeps a concurrent note from being lost.
UNWIND $rows AS row
MERGE (c:Conversation {user: $user, id: row.id})
SET c._lock = true
WITH c, row, coalesce(c.used_edges, []) AS used
SET c = row.props
SET c.used_edges = used + [id IN row.used WHERE NOT id IN used]

// Edges recall injected, added to the conversation's used edges (a merge, never a
// rewrite: concurrent recalls of one conversation all keep their notes).
UNWIND $rows AS row
MERGE (c:Conversation {user: $user, id: row.id})
SET c._lock = true
WITH c, row, coalesce(c.used_edges, []) AS used
SET c.used_edges = used + [id IN row.ids WHERE NOT id IN used]
REMOVE c._lock

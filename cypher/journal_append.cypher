// Lines appended to a conversation's extraction journal (the record is created if
// new). The lock comes first so that the read of the journal sees every commit.
UNWIND $rows AS row
MERGE (c:Conversation {user: $user, id: row.id})
SET c._lock = true
WITH c, row
SET c.journal = coalesce(c.journal, []) + row.lines
REMOVE c._lock

// A close sets the closing time alone: the rest of the record may be an ingest's.
UNWIND $rows AS row
MATCH (c:Conversation {user: $user, id: row.id})
SET c.closed_at = datetime(row.at)

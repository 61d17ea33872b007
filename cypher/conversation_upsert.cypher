UNWIND $rows AS row
MERGE (c:Conversation {user: $user, id: row.id})
SET c = row.props

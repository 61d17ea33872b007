MATCH (c:Conversation {user: $user, id: $id})
RETURN properties(c) AS props

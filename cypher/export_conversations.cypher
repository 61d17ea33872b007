MATCH (c:Conversation {user: $user})
RETURN properties(c) AS props
ORDER BY c.id

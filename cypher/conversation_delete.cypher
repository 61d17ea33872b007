UNWIND $ids AS id
MATCH (c:Conversation {user: $user, id: id})
DELETE c

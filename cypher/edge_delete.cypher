MATCH (:Entity {user: $user})-[r]->(:Entity)
WHERE r.id IN $ids
DELETE r

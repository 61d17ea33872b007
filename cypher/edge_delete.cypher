MATCH (:Entity)-[r]->(:Entity)
WHERE r.user = $user AND r.id IN $ids
DELETE r

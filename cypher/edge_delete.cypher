MATCH ()-[r]->()
WHERE elementId(r) IN $refs AND r.user = $user
DELETE r

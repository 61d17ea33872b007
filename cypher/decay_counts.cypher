MATCH (:Entity {user: $user})-[r]->(:Entity)
RETURN count(r) AS edges,
       sum(CASE WHEN r.dormant THEN 1 ELSE 0 END) AS dormant,
       sum(CASE WHEN r.expired THEN 1 ELSE 0 END) AS expired

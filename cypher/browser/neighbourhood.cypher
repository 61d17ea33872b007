// A person's (or anything's) neighbourhood: every current claim within two hops.
// In Browser: :param user => 'default'  and  :param name => 'Joshua'
MATCH (n:Entity {user: $user})
WHERE toLower($name) IN n.names_folded
MATCH path = (n)-[rels*1..2]-(:Entity)
WHERE all(r IN rels WHERE r.superseded_by IS NULL AND NOT r.dormant AND NOT r.expired)
RETURN path
LIMIT 200

// Every memory owner with at least one entity (index-backed on Entity.user).
MATCH (n:Entity)
RETURN DISTINCT n.user AS user

CALL () {
  MATCH (n:Entity {user: $user})
  WITH n.kind AS kind, count(*) AS c
  RETURN collect([kind, c]) AS kinds
}
CALL () {
  MATCH (:Entity {user: $user})-[r]->(:Entity)
  WITH type(r) AS relation, count(*) AS c,
       sum(CASE WHEN r.dormant THEN 1 ELSE 0 END) AS dormant,
       sum(CASE WHEN r.superseded_by IS NOT NULL THEN 1 ELSE 0 END) AS superseded,
       sum(CASE WHEN r.expired THEN 1 ELSE 0 END) AS expired
  RETURN collect([relation, c]) AS relations, sum(dormant) AS dormant,
         sum(superseded) AS superseded, sum(expired) AS expired
}
CALL () {
  MATCH (c:Conversation {user: $user})
  RETURN count(c) AS conversations, sum(coalesce(c.model_calls, 0)) AS calls,
         sum(coalesce(c.prompt_tokens, 0)) AS prompt_tokens,
         sum(coalesce(c.completion_tokens, 0)) AS completion_tokens,
         sum(coalesce(c.model_seconds, 0.0)) AS seconds
}
CALL () {
  MATCH (k:Key {user: $user})
  RETURN count(k) AS keys
}
RETURN kinds, relations, dormant, superseded, expired, conversations, keys,
       calls, prompt_tokens, completion_tokens, seconds

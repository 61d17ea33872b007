MATCH (k:Key {user: $user})
RETURN k.id AS id, k.text AS text, k.ref AS ref, k.kind AS kind,
       CASE WHEN $with_vectors THEN coalesce(k.embedding, k.claim_embedding) ELSE [] END AS vector
ORDER BY k.id

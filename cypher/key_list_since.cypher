// The owner's keys written after a version of its keys, with their vectors: what a
// copy held in memory lacks (through the (user, version) index).
MATCH (k:Key {user: $user})
WHERE k.version > $version
RETURN k.id AS id, k.text AS text, k.ref AS ref, k.kind AS kind,
       coalesce(k.embedding, k.claim_embedding) AS vector

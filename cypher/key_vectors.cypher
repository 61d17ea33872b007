// Stored vectors of keys about to be replaced or deleted: by key id, or by the
// node they name ($refs), so the owner's key sum can be kept exact.
MATCH (k:Key {user: $user})
WHERE k.id IN $ids OR (k.kind = 'node' AND k.ref IN $refs)
RETURN k.embedding AS vector

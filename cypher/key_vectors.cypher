// Stored vectors of keys about to be replaced or deleted: by key id, or by the
// node they name ($refs), so the owner's key sum can be kept exact. Claim keys
// are sentences and stay out of the sum (it centres name matches).
// UNWIND + exact match uses the (user, id) and (user, ref) indexes; an IN list
// would be checked against every key.
CALL () {
  UNWIND $ids AS id
  MATCH (k:Key {user: $user, id: id})
  RETURN k
  UNION
  UNWIND $refs AS ref
  MATCH (k:Key {user: $user, ref: ref})
  WHERE k.kind = 'node'
  RETURN k
}
WITH k WHERE k.kind <> 'claim'
RETURN k.embedding AS vector

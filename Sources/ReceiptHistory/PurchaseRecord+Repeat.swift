import ReceiptModel

/// The merge of a repeated occurrence: one newer than everything merged so far that states the same facts again,
/// which is what most occurrences are when every receipt lists its account's whole history.
extension PurchaseRecord {
    /// Merges occurrence `o` (recency `recency`, its text `t`) when it is newer than every occurrence merged so far
    /// and repeats the facts held: the same facts before the customer's and the cancellation's (equal values and
    /// spans, over a text that begins with `t`), the same user id and app account token when it has them, the
    /// same cancellation pair when it has one, and no change to `multiple_user_ids`. Then only the recency, the
    /// counts and the dates move, and the record is what the full merge would make (the same values; the full
    /// merge may lay out the text differently). Returns false, changing nothing, in any other case.
    mutating func mergeRepeat(_ o: PurchaseOccurrence, recency: Recency, text t: UnsafeRawBufferPointer) -> Bool {
        let f = o.facts
        guard newest < recency, facts.sameBeforeOverlay(f), text.count >= t.count else { return false }
        let same = text.withUnsafeBytes { held -> Bool in
            guard equalBytes(held.span(0, t.count), t) else { return false }
            if let y = f.userID {
                guard let x = facts.userID, equalBytes(held.span(x), t.span(y)) else { return false }
            }
            if let y = f.appAccountToken {
                guard let x = facts.appAccountToken, equalBytes(held.span(x), t.span(y)) else { return false }
            }
            return true
        }
        guard same else { return false }
        if f.cancellationDate != nil {
            guard facts.cancellationDate == f.cancellationDate, facts.cancellationReason == f.cancellationReason
            else { return false }
        }
        guard mergedMultipleUserIDs(f, t) == facts.multipleUserIDs else { return false }
        newest = recency
        occurrences += 1
        if let c = o.created { see(c, c) }
        if f.cancellationDate != nil { cancelledAt = recency }
        if f.userID != nil { userAt = recency }
        if f.appAccountToken != nil { tokenAt = recency }
        return true
    }
}

// NotificationToken: what an observation returns, keeping it alive until invalidated or
// released.
import CoveCore

/// Keeps an observation alive; `invalidate()` (or releasing the token) stops it. A token may be
/// invalidated from inside its own callback, and from any thread: from the realm's thread no
/// callback runs after `invalidate()` returns; from another, a callback already under way on the
/// realm's thread finishes, and none starts after it. The realm lets go of the callback at its
/// next delivery point.
public final class NotificationToken: @unchecked Sendable {
    // The notifier is confined to its realm's thread, like the realm; `invalidate` from another
    // thread only sets the registration's atomic flag, which delivery reads on the realm's
    // thread. The reference is never written after `init`, so threads may share the token.
    private weak var registration: NotifierRegistration?

    /// A token of `registration`; of none, for an observation that could not start.
    init(_ registration: NotifierRegistration?) {
        self.registration = registration
    }

    /// Stops the observation: no callback runs after this returns (on the realm's thread).
    public func invalidate() {
        registration?.invalidate()
    }

    deinit { invalidate() }
}

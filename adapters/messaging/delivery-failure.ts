/**
 * Why a message was not delivered. A permanent failure (a rejected address, a SOAP Fault, a 4xx) is not
 * worth retrying; a temporary one (no connection, a timeout, a 5xx) is.
 */
export class DeliveryFailure extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    /** A SOAP Fault's code and string, when the peer answered one. */
    readonly fault?: { code: string | null; string: string },
    /** The relay or peer itself could not be reached (refused, timed out): no message would get through now. */
    readonly unreachable = false,
    /** The platform's own fault, not the recipient's or the provider's: its template gone, a secret unreadable. */
    readonly technical = false,
    /**
     * A permanent refusal of the configuration, not of the message (a relay that refuses the login or the
     * sender): another configuration may still take the message.
     */
    readonly ofConfiguration = false,
  ) {
    super(message);
    this.name = 'DeliveryFailure';
  }
}

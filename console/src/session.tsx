import { createContext, useContext } from 'react';

/** Who is signed in, as the API sees them (`GET /api/directory/me`), and what their roles let them do. */
export interface Me {
  id: string;
  name: string;
  roles: string[];
  sites: string[];
}

export interface Session {
  me: Me;
  isAdmin: boolean;
  /** Creates and edits drafts, asks to publish (EDITOR, or ADMIN). */
  canEdit: boolean;
  /** Decides approvals (MANAGER, or ADMIN). */
  canDecide: boolean;
  /** The sites whose content the user reads: their own, or those an ADMIN names. */
  sites: string[];
}

export function sessionOf(me: Me): Session {
  const isAdmin = me.roles.includes('ADMIN');
  return { me, isAdmin, canEdit: isAdmin || me.roles.includes('EDITOR'), canDecide: isAdmin || me.roles.includes('MANAGER'), sites: me.sites };
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

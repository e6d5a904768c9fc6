import { add, setHeader, type } from './xds';

/**
 * The caller's identity as `X-User-*` headers, and a well-formed request id, made by Envoy's own filters
 * (no Lua): header mutations whose values are CEL expressions over the verified token's claims, which
 * jwt_authn puts in the request's metadata (decision 042).
 *
 * The format is the one the spec gives (conventions.md): one line per value, lists joined with commas. In a
 * value, each tab, line break and comma becomes a space, so a claim can neither add a header nor add an
 * item to a list. All six headers are set once a token is verified, as the spec says: a claim that is
 * missing or not a string (for a list: not a list of strings), or that holds any other control character,
 * gives an empty one.
 */

/** Where jwt_authn puts the verified token's claims (`payload_in_metadata` in envoy-config.ts). */
export const CLAIMS_KEY = 'jwt_payload';
const CLAIMS = `metadata.filter_metadata['envoy.filters.http.jwt_authn']['${CLAIMS_KEY}']`;

/**
 * The characters that become spaces. Envoy parses a CEL expression only 32 calls deep, too few for one
 * `replace` per control character; so these common ones are replaced, and any other control character
 * takes the whole value out.
 */
const SPACED = ['\\t', '\\n', '\\r', ','];
/** CEL regular expressions: no control character and no comma; no control character but NUL. */
const PLAIN = `'^[^\\\\x00-\\\\x1f\\\\x7f,]*$'`;
const NO_CONTROL_BUT_NUL = `'^[^\\\\x01-\\\\x1f\\\\x7f]*$'`;

/** Each of SPACED becomes a space. */
const spaced = (text: string) => SPACED.reduce((so, character) => `${so}.replace('${character}', ' ')`, text);

/**
 * One claim as one clean value. Each look-up of a claim costs CPU on every request, so the common case, a
 * value with nothing to clean, takes two: one to check it, one to give it.
 */
export function singleValue(claim: string): string {
  const value = `${CLAIMS}['${claim}']`;
  const cleaned = spaced(value);
  return `${value}.matches(${PLAIN}) ? ${value} : (${cleaned}.matches(${PLAIN}) ? ${cleaned} : '')`;
}

/**
 * A list claim as one comma-joined value. CEL in Envoy has no loops, so items cannot be cleaned one by one.
 * When no item holds a comma or a control character, the items joined with commas are the value. Otherwise
 * the items are joined with NUL, cleaned, and the NULs become commas. An item's own NUL could not be told
 * from a separator: such a list gives an empty value.
 */
export function listValue(claim: string): string {
  const items = `${CLAIMS}['${claim}']`;
  const nulJoined = `${items}.join('\\x00')`;
  const unambiguous = `${nulJoined}.split('\\x00').size() == size(${items})`;
  const cleaned = spaced(nulJoined);
  const clean = `${unambiguous} && ${cleaned}.matches(${NO_CONTROL_BUT_NUL})`;
  return `${items}.join('').matches(${PLAIN}) ? ${items}.join(',') : (${clean} ? ${cleaned}.replace('\\x00', ',') : '')`;
}

/** The headers, and the claim each comes from. */
const SINGLE_CLAIMS = { 'x-user-id': 'sub', 'x-user-name': 'name', 'x-user-email': 'email', 'x-user-site-id': 'site' };
const LIST_CLAIMS = { 'x-user-roles': 'roles', 'x-user-sites': 'sites' };

/** The CEL formatter with the string functions the expressions use (replace, split, join). */
const CEL_FORMATTER = {
  name: 'envoy.formatter.cel',
  typed_config: { '@type': type('envoy.extensions.formatter.cel.v3.Cel'), cel_config: { enable_string_functions: true } },
};

/** `%CEL(…)%`: a header's value computed by a CEL expression. */
const cel = (expression: string) => `%CEL(${expression})%`;

/** A header set even when its value is empty (an expression that fails gives an empty value). */
const setEvenEmpty = (key: string, value: string) => ({ append: { ...setHeader(key, value), keep_empty_value: true } });

/**
 * The header mutations of a service's route, after jwt_authn: every `X-User-*` a client sent is removed,
 * then the verified caller's are set. Every service route requires a verified token (`routes.ts`), so they
 * never run without one.
 */
export function identityHeaderMutations() {
  return [
    { remove_on_match: { key_matcher: { prefix: 'x-user-' } } },
    ...Object.entries(SINGLE_CLAIMS).map(([header, claim]) => setEvenEmpty(header, cel(singleValue(claim)))),
    ...Object.entries(LIST_CLAIMS).map(([header, claim]) => setEvenEmpty(header, cel(listValue(claim)))),
  ];
}

export const IDENTITY_FORMATTERS = [CEL_FORMATTER];

/** The request ids the edge keeps, as the API's own (`api/http/request-context.ts`). */
const REQUEST_ID_CHARACTERS = `'^[A-Za-z0-9._-]+$'`;
const SCRATCH = 'x-opsflow-kept-request-id';

/**
 * Before Envoy looks at the request id: a client's id is kept only when it is well formed. A malformed one is
 * removed, and Envoy makes its own. The kept id passes through a scratch header, removed first so that a
 * client cannot set it.
 */
export function requestIdCheck() {
  const id = "request.headers['x-request-id']";
  return {
    name: 'envoy.http.early_header_mutation.header_mutation',
    typed_config: {
      '@type': type('envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation'),
      mutations: [
        { remove: SCRATCH },
        // Envoy refuses a regular expression as large as `{1,128}`: the length is checked apart.
        add(SCRATCH, cel(`size(${id}) <= 128 && ${id}.matches(${REQUEST_ID_CHARACTERS}) ? ${id} : ''`)),
        { remove: 'x-request-id' },
        add('x-request-id', `%REQ(${SCRATCH})%`),
        { remove: SCRATCH },
      ],
      // No formatters field here: Envoy's built-in CEL formatter, without string functions, is enough.
    },
  };
}

// A request target as a path: an absolute-form target (`GET http://host/api/quote`, as a proxy
// sends it), which fastify routes like its path, is read by the path-based header rules (CORS,
// the portal's headers) as that path too.
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** `target` without an absolute form's scheme and authority; most targets start with their path, and are returned as they are. */
export const originForm = (target: string): string => (target.startsWith('/') ? target : target.replace(ABSOLUTE_FORM, ''));

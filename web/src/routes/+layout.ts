// A static single-page app: every page renders in the browser against the REST API.
export const ssr = false;
export const prerender = false;
export const trailingSlash = 'never';

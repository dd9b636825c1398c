// SvelteKit 3 takes its configuration here, inside sveltekit({...}).
import adapter from '@sveltejs/adapter-static';
import { sveltekit } from '@sveltejs/kit/vite';
import tailwindcss from '@tailwindcss/vite';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [
    tailwindcss(),
    sveltekit({
      adapter: adapter({ pages: 'build', assets: 'build', fallback: 'index.html', strict: false }),
    }),
  ],
  // Bundle SvelteKit's own `cookie` (v2) into the server output used for analysis; the root
  // node_modules holds Express's older v0.7, which resolves first from the output folder.
  ssr: { noExternal: ['cookie'] },
  server: {
    proxy: { '/v1': 'http://localhost:8080', '/oauth': 'http://localhost:8080' },
  },
});

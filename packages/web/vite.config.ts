import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

const server = { proxy: { '/api': 'http://127.0.0.1:8080', '/ui-config.json': 'http://127.0.0.1:8080' } };

// `vite build` builds the public UI into dist; `vite build --mode admin` builds the
// operators' admin page (admin.html) into dist-admin, apart from it, so that a server
// without ADMIN_TOKEN serves none of it (packages/server/src/http/routes/admin-page.ts).
export default defineConfig(({ mode }) =>
  mode === 'admin'
    ? {
        plugins: [preact()],
        base: '/admin/',
        publicDir: false,
        build: { outDir: 'dist-admin', emptyOutDir: true, sourcemap: true, rollupOptions: { input: 'admin.html' } },
        server,
      }
    : {
        plugins: [preact()],
        build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
        server,
      },
);

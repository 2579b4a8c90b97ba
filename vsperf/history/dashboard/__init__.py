"""The trend dashboard: pages rendered from the store (`pages`), written as a static site
(`site`) or served live on 127.0.0.1 (`server`); the chart library is plotly.js from the plotly
package, copied next to the pages (no CDN: the site works offline)."""

-- Destination limits shared by every replica (src/mta/Destinations.ts, SQL in
-- src/mta/destinations/store.ts). Times are written from the appliance's Clock, never now().

-- A site: the set of MX hosts a recipient domain resolves to (or the domain itself behind a
-- smarthost). Its connection cap, its message rate and its back-off after 421 / 4.7.x.
CREATE TABLE destination_sites (
  site                    text PRIMARY KEY,
  name                    text NOT NULL,             -- the shaping entry: gmail, outlook, default …
  max_connections         integer NOT NULL,
  next_slot_at            timestamptz,               -- the rate: when the next message may start
  paused_until            timestamptz,               -- back-off: left out of claims until then
  backoff_ms              integer NOT NULL DEFAULT 0 -- the current pause length (doubles, eases off)
);
CREATE INDEX destination_sites_paused ON destination_sites (paused_until) WHERE paused_until IS NOT NULL;

-- Connection slots 0 … max_connections-1 of a site, each leased by one replica for as long as it
-- may hold an SMTP connection on it; an expired lease (a crashed replica) can be taken over.
CREATE TABLE destination_slots (
  site                    text NOT NULL REFERENCES destination_sites ON DELETE CASCADE,
  slot                    integer NOT NULL,
  owner                   text,
  lease_until             timestamptz,
  PRIMARY KEY (site, slot)
);
CREATE INDEX destination_slots_owner ON destination_slots (owner) WHERE owner IS NOT NULL;

-- Which site a recipient domain is at (claims leave out the domains of paused or full sites).
CREATE TABLE destination_domains (
  domain                  text PRIMARY KEY,
  site                    text NOT NULL REFERENCES destination_sites ON DELETE CASCADE
);
CREATE INDEX destination_domains_site ON destination_domains (site);

"""Places: a small gazetteer of countries, regions and towns, so that a place said in a meeting is
taken for no person and no employer ("I know perhaps Swansea and Neath Port Talbot - we have a
team-around-the-family approach": two local authorities' areas, not two acquaintances).

Source and licence: hand-written for this project from general knowledge (no third-party list
copied), so it ships under the project's own licence. It is deliberately small: the countries,
the nations, regions and local-authority areas of the UK and Ireland (the committee meetings of
the corpora are Welsh and Scottish), US states, Canadian provinces, Indian states, continents, and
towns large or often said in business talk. A name is a place only as a whole ("Swansea", "Neath
Port Talbot"), never as a word of a longer name: "Swansea University", "Cardiff Council",
"Yorkshire Water", "Severn Trent", "Jack London" and "Paris Hilton" are no places.

Two kinds, because organisations are often named after towns:
- REGIONS (countries, states, provinces, counties, regions): never a person, never an employer;
- TOWNS: never a person; an employer only when a verb of joining, leaving or hiring names it
  ("Oduya joins from Zurich": the insurer; "I'm at Zurich this week": no employer said).
"""

from __future__ import annotations

import re

from backchannel.memory.text import norm_name

_COUNTRIES = """
Afghanistan|Albania|Algeria|Andorra|Angola|Argentina|Armenia|Australia|Austria|Azerbaijan|Bahamas|Bahrain
|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia|Botswana|Brazil|Brunei|Bulgaria
|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Chile|China|Colombia|Congo|Costa Rica|Croatia|Cuba|Cyprus
|Czechia|Czech Republic|Denmark|Djibouti|Dominican Republic|Ecuador|Egypt|El Salvador|England|Eritrea
|Estonia|Eswatini|Ethiopia|Fiji|Finland|France|Gabon|Gambia|Germany|Ghana|Great Britain|Greece|Guatemala
|Guinea|Guyana|Haiti|Honduras|Hungary|Iceland|India|Indonesia|Iran|Iraq|Ireland|Northern Ireland|Israel
|Italy|Ivory Coast|Jamaica|Japan|Kazakhstan|Kenya|Korea|South Korea|North Korea|Kosovo|Kuwait|Kyrgyzstan
|Laos|Latvia|Lebanon|Lesotho|Liberia|Libya|Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|Malaysia
|Maldives|Mali|Malta|Mauritania|Mauritius|Mexico|Moldova|Monaco|Mongolia|Montenegro|Morocco|Mozambique
|Myanmar|Namibia|Nepal|Netherlands|Holland|New Zealand|Nicaragua|Niger|Nigeria|North Macedonia|Norway|Oman
|Pakistan|Palestine|Panama|Papua New Guinea|Paraguay|Peru|Philippines|Poland|Portugal|Qatar|Romania|Russia
|Rwanda|Saudi Arabia|Scotland|Senegal|Serbia|Sierra Leone|Singapore|Slovakia|Slovenia|Somalia|South Africa
|South Sudan|Spain|Sri Lanka|Sudan|Suriname|Sweden|Switzerland|Syria|Taiwan|Tajikistan|Tanzania|Thailand
|Togo|Trinidad|Tunisia|Turkey|Turkmenistan|Uganda|Ukraine|United Arab Emirates|UAE|United Kingdom|UK
|United States|USA|America|Uruguay|Uzbekistan|Venezuela|Vietnam|Wales|Yemen|Zambia|Zimbabwe
"""
_CONTINENTS = "Africa|Asia|Europe|North America|South America|Latin America|Oceania|Antarctica|Middle East|Scandinavia"
# The 22 principal areas of Wales, Scottish council areas, English regions and counties, Irish counties.
_UK_IE = """
Anglesey|Gwynedd|Conwy|Denbighshire|Flintshire|Wrexham|Powys|Ceredigion|Pembrokeshire|Carmarthenshire
|Neath Port Talbot|Bridgend|Vale of Glamorgan|Rhondda Cynon Taf|Merthyr Tydfil|Caerphilly|Blaenau Gwent
|Torfaen|Monmouthshire|Newport|North Wales|South Wales|West Wales|Mid Wales|the Valleys
|Aberdeenshire|Argyll|Ayrshire|Fife|Highland|the Highlands|Lanarkshire|Lothian|Moray|Perthshire
|Renfrewshire|Stirlingshire|Borders|Dumfries and Galloway|Orkney|Shetland|Hebrides
|North East|North West|Yorkshire|the Midlands|East Midlands|West Midlands|East Anglia|South East|South West
|Cornwall|Devon|Dorset|Somerset|Wiltshire|Hampshire|Sussex|Kent|Surrey|Essex|Suffolk|Norfolk|Berkshire
|Oxfordshire|Buckinghamshire|Hertfordshire|Bedfordshire|Cambridgeshire|Northamptonshire|Leicestershire
|Nottinghamshire|Derbyshire|Lincolnshire|Staffordshire|Shropshire|Herefordshire|Worcestershire
|Warwickshire|Gloucestershire|Cheshire|Lancashire|Cumbria|Northumberland|Merseyside
|Greater Manchester|Tyneside|Teesside|Antrim|Armagh|Tyrone|Fermanagh|Cork|Galway|Donegal
|Wicklow|Kildare|Limerick|Tipperary|Wexford
"""
_STATES = """
Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Hawaii|Idaho|Illinois
|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi
|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|North Carolina|North Dakota|Ohio
|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont
|Virginia|West Virginia|Wisconsin|Wyoming|Silicon Valley|the Bay Area|New England|the Midwest
|Alberta|British Columbia|Manitoba|New Brunswick|Newfoundland|Nova Scotia|Ontario|Quebec|Québec
|Saskatchewan|Yukon|Nunavut|Northwest Territories
|Andhra Pradesh|Assam|Bihar|Goa|Gujarat|Haryana|Jharkhand|Karnataka|Kerala|Madhya Pradesh|Maharashtra
|Odisha|Punjab|Rajasthan|Tamil Nadu|Telangana|Uttar Pradesh|Uttarakhand|West Bengal|Kashmir
|Bavaria|Catalonia|Andalusia|Lombardy|Tuscany|Provence|Brittany|Normandy|Île-de-France|Flanders|Wallonia
|Queensland|New South Wales|Tasmania
"""
_TOWNS = """
London|Cardiff|Swansea|Aberystwyth|Bangor|Llanelli|Pontypridd|Edinburgh|Glasgow|Aberdeen|Dundee
|Inverness|Stirling|Perth|Belfast|Derry|Dublin|Galway City|Manchester|Birmingham|Liverpool|Leeds|Sheffield
|Bristol|Newcastle|Nottingham|Leicester|Coventry|Bradford|Southampton|Portsmouth|Plymouth|Brighton
|Oxford|Cambridge|Reading|Milton Keynes|York|Hull|Exeter|Bath|Norwich|Ipswich|Swindon|Gatwick|Heathrow
|Paris|Lyon|Marseille|Toulouse|Lille|Bordeaux|Nantes|Nice|Strasbourg|Berlin|Munich|Hamburg|Frankfurt
|Cologne|Stuttgart|Düsseldorf|Madrid|Barcelona|Valencia|Seville|Bilbao|Lisbon|Porto|Rome|Milan|Turin
|Naples|Amsterdam|Rotterdam|The Hague|Brussels|Antwerp|Zurich|Geneva|Basel|Vienna|Prague|Warsaw|Krakow
|Budapest|Bucharest|Athens|Istanbul|Stockholm|Gothenburg|Oslo|Bergen|Copenhagen|Helsinki|Reykjavik|Tallinn
|Riga|Vilnius|Kyiv|Moscow|New York|New York City|NYC|Manhattan|Brooklyn|Boston|Chicago|Los Angeles|LA
|San Francisco|Seattle|Portland|Dallas|Austin|Atlanta|Miami|Philadelphia|Pittsburgh
|Detroit|Minneapolis|Phoenix|San Diego|San Jose|Las Vegas|Nashville|Baltimore|Washington DC|DC
|Toronto|Montreal|Montréal|Vancouver|Ottawa|Calgary|Edmonton|Winnipeg|Mexico City|São Paulo|Rio
|Rio de Janeiro|Buenos Aires|Santiago|Bogotá|Bogota|Mumbai|Bombay|Delhi|New Delhi|Bangalore
|Bengaluru|Chennai|Madras|Hyderabad|Pune|Kolkata|Calcutta|Ahmedabad|Gurgaon|Gurugram|Noida|Mysore
|Mysuru|Kochi|Jaipur|Lucknow|Chandigarh|Karachi|Lahore|Dhaka|Colombo|Kathmandu|Tokyo|Osaka|Kyoto
|Yokohama|Seoul|Beijing|Shanghai|Shenzhen|Hong Kong|Taipei|Bangkok|Jakarta|Manila|Kuala Lumpur|Hanoi
|Dubai|Abu Dhabi|Doha|Riyadh|Tel Aviv|Cairo|Lagos|Abuja|Nairobi|Accra|Johannesburg|Cape Town
|Casablanca|Sydney|Melbourne|Brisbane|Auckland|Wellington|Stavanger|Trondheim|Malmö|Aarhus|Eindhoven
"""


# Before a town, words that make it an employer ("joins from Zurich", "left Zurich", "hired by
# Zurich"); after it, a hire ("Zurich has hired"). "from", "at" and "in" alone say where, not for whom.
_EMPLOYER_BEFORE = re.compile(
    r"\b(?:joins|joined|joining|join|left|leaves|leaving|quit|quits|(?:joins|joined|joining)\s+from"
    r"|(?:hired|poached|employed|headhunted)\s+by|works?\s+for|worked\s+for|working\s+for)\s+(?:the\s+)?$",
    re.I,
)
_EMPLOYER_AFTER = re.compile(
    r"^(?:['’]s\s+(?:new|chief|head|board)\b|\s+(?:has\s+hired|hires|hired|appoints|appointed|names|named"
    r"|promotes|promoted|poached)\b)"
)


def _names(block: str) -> frozenset[str]:
    return frozenset(norm_name(x) for x in block.replace("\n", "").split("|") if x.strip())


REGIONS = _names(_COUNTRIES) | _names(_CONTINENTS) | _names(_UK_IE) | _names(_STATES)
TOWNS = _names(_TOWNS) - REGIONS


def _key(name: str) -> str:
    key = norm_name(name)
    return key[4:] if key.startswith("the ") and key[4:] in REGIONS | TOWNS else key


def is_place(name: str) -> bool:
    """Whether `name`, as a whole, is a country, region or town of the gazetteer."""
    key = _key(name)
    return key in REGIONS or key in TOWNS


def is_region(name: str) -> bool:
    """A country, state, province, county or region: never an organisation, whatever frames it."""
    return _key(name) in REGIONS


def employer_frame(text: str, start: int, end: int) -> bool:
    """Whether the words around text[start:end] make the town said there an employer (_EMPLOYER_BEFORE)."""
    return bool(_EMPLOYER_BEFORE.search(text, max(0, start - 24), start) or _EMPLOYER_AFTER.match(text[end : end + 24]))


# The strongest of those frames: a verb that names an employer only ("joins from Zurich", "hired by
# Zurich", "works for Zurich"), never one of moving house ("left Zurich", "joined us in Zurich").
_HIRED_BEFORE = re.compile(
    r"\b(?:(?:joins|joined|joining)\s+from|(?:hired|poached|employed|headhunted)\s+by|works?\s+for|worked\s+for"
    r"|working\s+for)\s+(?:the\s+)?$",
    re.I,
)


def hired_frame(text: str, start: int, end: int) -> bool:
    """Whether the words around text[start:end] name it as someone's employer, be it a town's name too."""
    return bool(_HIRED_BEFORE.search(text, max(0, start - 24), start) or _EMPLOYER_AFTER.match(text[end : end + 24]))


def no_employer(name: str, text: str, start: int, end: int, organisations: set[str] | frozenset[str]) -> bool:
    """A place said at text[start:end] that is no organisation: a region always; a town unless a verb of
    joining, leaving or hiring names it there, or the meeting does so elsewhere (`organisations`)."""
    if is_region(name):
        return True
    return is_place(name) and norm_name(name) not in organisations and not employer_frame(text, start, end)

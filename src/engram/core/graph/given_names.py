"""Given names common across the world's languages, for names written in lowercase and
names that open a sentence.

Chat drops capitals ("went to nandos with ciara", "my cousin sara", "ravi and deepika are
hosting"), and the rules read a name by its capital. A lowercase word that is one of these
is read as a person's name wherever it stands. A sentence's first word has a capital
whatever it is, so the rules read it as a name only with a cue or when the scope knows
it; one of these is read there with neither ("Deepika always wins"). Left out: every
given name that is also an English word ("will", "mark", "grace", "hope", "rose", "jack",
"max", "tom", "peter", "harry", "mike", "victor", "carol", "josh", "tony", "karen",
"henry", "joey"), the months and seasons ("may", "june", "summer"), and short forms that
are words elsewhere ("can", "lei", "bo", "ren"). Normal forms
(:func:`engram.core.graph.names.normalise`). Written from general knowledge, not read off
any labelled text.
"""

from __future__ import annotations

_NAMES = """
ali mohammed muhammad mohamed mohammad ahmed ahmad omar umar hassan hussein yusuf youssef
ibrahim khalid tariq bilal jamal farouk karim kareem rashid samir nabil walid faisal
hamza idris ismail mustafa mahmoud salma fatima aisha ayesha zainab layla leila noura
nour mariam maryam yasmin yasmine amina rania huda samira khadija nadia dina lina reem
sara sarah ravi deepika priya arjun rahul rohan vikram sanjay anil sunil amit ankit
aditya ananya aarav vivek nikhil kiran pooja neha sneha kavya divya anjali aishwarya
lakshmi meera shreya isha riya naveen ishaan farhan imran asif ritu sunita vijay ajay
suresh ramesh ganesh manish deepak pradeep rajesh sandeep harpreet gurpreet simran
jaspreet manpreet wei mei ming xin jing hiroshi kenji takeshi haruki yuki sakura aiko
akira kaito jisoo jiwoo seojun linh minh thanh trang huong niamh aoife siobhan ciara
ciaran ciarán cormac declan eoin saoirse sinead sinéad oisin oisín padraig aisling
roisin róisín orla caoimhe cathal fionn seamus sean eamon ronan conor connor liam aidan
brendan colm donal fergal grainne maeve niall cian tadhg mairead beatriz joao joão
maria mariana sofia sofía lucia lucía carmen pablo diego javier alejandro alejandra
carlos juan jose josé luis miguel pedro rafael sergio andres andrés fernando lucas
mateo gabriel gabriela camila valentina isabella isabel ana paula marta elena laura
raquel ines inês francisco antonio manuel jorge ricardo eduardo gonzalo alvaro álvaro
ignacio rodrigo enzo thiago tiago gustavo bruno marco matteo giulia giovanni francesca
chiara alessandro lorenzo luca federica valeria daniela fernanda catalina ximena renata
james john michael david daniel thomas matthew andrew joshua christopher jonathan nathan
ethan noah oliver elijah benjamin samuel alexander william joseph anthony steven kevin
brian jason justin ryan eric adam aaron kyle tyler brandon jacob logan dylan evan ian
patrick timothy jeremy jeffrey gregory richard robert charles george edward emily
emma olivia sophia sophie ava mia abigail elizabeth charlotte amelia evelyn jessica
jennifer ashley amanda stephanie nicole melissa rebecca rachel hannah anna katie lucy
chloe zoe megan lauren alice clara julia nora ella leah natalie caroline gina joanna
jolene deborah audrey melanie samantha catherine katherine kathryn margaret susan linda
barbara nancy lisa betty helen sandra donna michelle kimberly amy angela brenda
annie jane janet diana julie kelly christina lindsay heidi tina tracy wendy nina
vanessa monica erica erin jenny jenna tim sam dave steve chris alex jake
luke nate andy danny johnny kenny jon jim joe ben dan ted fred greg jeff ron zach
calvin emeka chidi chinedu ngozi adaeze funmi segun tolu tunde kemi bola yemi femi ayo
wanjiru kamau otieno achieng amara kwame kofi abena thabo sipho lerato nomvula zanele
themba jakub marek piotr tomasz katarzyna agnieszka magdalena andriy oksana olena
dmitri dmitry sergei ivan olga natasha anastasia irina svetlana tatiana vladimir nikolai
pavel milena anouk sanne lars sven ingrid astrid freya nils erik anders johan henrik
mikko aino mehmet emre elif zeynep ayse ayşe fatma burak deniz ozan reza mehdi parisa
shirin navid nasrin
"""
GIVEN = frozenset(_NAMES.split())
"""Every listed given name's normal form."""
